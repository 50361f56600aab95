import { render } from 'preact';
import 'uplot/dist/uPlot.min.css';
import '../styles.css';
import './portal.css';
import { setShell } from '../ui.tsx';
import { PortalApp } from './app.tsx';
import { onLinkClick, PORTAL_BASE, reachedInApp } from './router.ts';

// The dashboard's components (Page, Link) under the portal's name, base and navigation.
setShell({ name: 'Affiliate portal', base: PORTAL_BASE, onLinkClick, reachedInApp });
render(<PortalApp />, document.getElementById('app')!);
