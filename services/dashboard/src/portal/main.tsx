import { render } from 'preact';
import 'uplot/dist/uPlot.min.css';
import '../styles.css';
import './portal.css';
import { setShell } from '../ui.tsx';
import { PortalApp } from './app.tsx';
import { setBase } from '../router.ts';

// The dashboard's components (Page, Link) and navigation under the portal's name and base.
setBase('/portal');
setShell({ name: 'Affiliate portal' });
render(<PortalApp />, document.getElementById('app')!);
