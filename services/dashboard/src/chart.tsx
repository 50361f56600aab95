import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

/**
 * A daily line chart (uPlot). The canvas is an image to assistive technology, so the same figures follow in a table
 * that is visually hidden; the chart follows its container's width (1280 px and 390 px screens alike).
 */
export function DailyChart(props: { title: string; days: string[]; series: Series[]; format?: (v: number) => string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = props.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 240),
        height: 200,
        series: [
          {},
          ...props.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            value: (_u: uPlot, v: number | null) => (v == null ? '—' : (props.format ?? String)(v)),
          })),
        ],
        axes: [{}, { values: (_u: uPlot, ticks: number[]) => ticks.map((t) => (props.format ?? String)(t)), size: 70 }],
        scales: { x: { time: true } },
      },
      [xs, ...props.series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 240), height: 200 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.days, props.series]);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} aria-hidden="true" />
      <table class="visually-hidden">
        <caption>{props.title}, by day</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {props.series.map((s) => (
              <th scope="col" key={s.label}>
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.days.map((d, i) => (
            <tr key={d}>
              <th scope="row">{d}</th>
              {props.series.map((s) => (
                <td key={s.label}>{(props.format ?? String)(s.values[i] ?? 0)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
