import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * Paths inside the app, without its base: /dashboard, or /portal in the affiliate portal's bundle, built from the
 * same modules (portal/main.tsx sets it before the first render). History API navigation: every page has its own URL.
 */
let base = '/dashboard';
export const setBase = (to: string) => {
  base = to;
};
export const appBase = () => base;

export function currentPath(): string {
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : location.pathname;
  return path === '' ? '/' : path.replace(/\/+$/, '') || '/';
}

let moved = false;
/** Whether the current page was reached inside the app (not by loading it): only then does focus move to its title. */
export const reachedInApp = () => moved;

export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  moved = true;
  if (opts.replace) history.replaceState(null, '', base + path);
  else history.pushState(null, '', base + path);
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

/** A link within the app: a real href (open in new tab works) and client-side navigation on a plain click. */
export function onLinkClick(e: MouseEvent, path: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(path);
}

/** A path's named parts (`:id` in the pattern), decoded. */
type Params = Record<string, string>;

/** One entry of the route table: a path pattern (`/affiliates/:id`) and the page shown there. */
export interface Route<C> {
  path: string;
  page: (props: { params: Params; context: C }) => ComponentChildren;
}

/** The route whose pattern the path fits, with its params: each segment matches a literal or names a `:param`. */
export function matchRoute<C>(
  routes: readonly Route<C>[],
  path: string,
): { route: Route<C>; params: Params } | undefined {
  let parts: string[];
  try {
    parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return undefined; // a malformed escape (%E0) names no page
  }
  for (const route of routes) {
    const pattern = route.path.split('/').filter(Boolean);
    if (pattern.length !== parts.length) continue;
    const params: Params = {};
    const fits = pattern.every((p, i) => {
      if (p.startsWith(':')) params[p.slice(1)] = parts[i]!;
      return p.startsWith(':') || p === parts[i];
    });
    if (fits) return { route, params };
  }
  return undefined;
}
