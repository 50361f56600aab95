import { useEffect, useState } from 'preact/hooks';

/**
 * The portal's paths, without its /portal base (`/`, `/performance`, …): History API navigation as the dashboard's
 * (../router.ts, whose route table matching the portal shares), under its own base.
 */
export const PORTAL_BASE = '/portal';

export function currentPath(): string {
  const path = location.pathname.startsWith(PORTAL_BASE) ? location.pathname.slice(PORTAL_BASE.length) : '/';
  return path.replace(/\/+$/, '') || '/';
}

let moved = false;
/** Whether the page was reached inside the portal (not loaded afresh): only then does focus move to its title. */
export const reachedInApp = () => moved;

export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  moved = true;
  if (opts.replace) history.replaceState(null, '', PORTAL_BASE + path);
  else history.pushState(null, '', PORTAL_BASE + path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => {
      moved = true;
      setPath(currentPath());
    };
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

/** A plain click on a portal link navigates inside the app; a modified one (new tab) is left to the browser. */
export function onLinkClick(e: MouseEvent, path: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(path);
}
