import { RangeControls, SeriesSection, useRange } from '../analytics.tsx';
import { EventsSection, TopTables } from '../analytics-tables.tsx';
import { Page } from '../ui.tsx';

/**
 * Clicks, conversions, revenue and commissions over a range: the series by day, the top values of each dimension,
 * and the conversion events with their attribution; each series and table downloads as the CSV of what it shows.
 */
export function AnalyticsPage() {
  const { range, span, set } = useRange();
  return (
    <Page title="Analytics">
      <RangeControls range={range} set={set} />
      <SeriesSection span={span} fileName="analytics" />
      <TopTables span={span} fileName="analytics" />
      <EventsSection span={span} fileName="analytics" />
    </Page>
  );
}
