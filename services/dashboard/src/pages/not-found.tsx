import { Link, Page } from '../ui.tsx';

export const NotFound = () => (
  <Page title="Not found">
    <p>There is no such page or record in your account.</p>
    <Link to="/">Back to the overview</Link>
  </Page>
);
