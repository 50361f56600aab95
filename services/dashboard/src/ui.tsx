import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { BASE, onLinkClick, reachedInApp } from './router.ts';

/**
 * A page: its title in the tab and as the one h1. Arriving by a link inside the app moves focus to the h1, so that
 * screen readers announce the new page; a page loaded afresh leaves focus at the top (the skip link comes first).
 */
export function Page(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Dashboard`;
    if (reachedInApp()) heading.current?.focus();
  }, [props.title]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={heading}>
          {props.title}
        </h1>
        {props.actions}
      </div>
      {props.children}
    </>
  );
}

export function Link(props: { to: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a
      href={BASE + props.to}
      class={props.class}
      aria-current={props.current ? 'page' : undefined}
      onClick={(e) => onLinkClick(e, props.to)}
    >
      {props.children}
    </a>
  );
}

export const Loading = (props: { what: string }) => (
  <p class="muted" role="status">
    Loading {props.what}…
  </p>
);

export const ErrorText = (props: { error: string | undefined }) =>
  props.error ? (
    <p class="error" role="alert">
      {props.error}
    </p>
  ) : null;

export const Empty = (props: { children: ComponentChildren }) => <p class="empty">{props.children}</p>;

/** Loading, error or content: what every loaded section shows. */
export function Loaded<T>(props: {
  state: { data: T | undefined; error: string | undefined; loading: boolean };
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  if (props.state.error) return <ErrorText error={props.state.error} />;
  if (props.state.data === undefined) return <Loading what={props.what} />;
  return <>{props.children(props.state.data)}</>;
}

export function Pager(props: {
  page: number;
  next: string | null | undefined;
  onNext: (c: string) => void;
  onPrevious: () => void;
  label: string;
}) {
  if (props.page === 1 && !props.next) return null;
  return (
    <nav class="pager" aria-label={`${props.label} pages`}>
      <button type="button" disabled={props.page === 1} onClick={props.onPrevious}>
        Previous
      </button>
      <span>Page {props.page}</span>
      <button type="button" disabled={!props.next} onClick={() => props.next && props.onNext(props.next)}>
        Next
      </button>
    </nav>
  );
}

/**
 * One page of a cursor-paged list as a table: loading and error states, the empty text, the column headers (the last
 * one, `actions`, named for screen readers only), a row per item and the pager.
 */
export function PagedTable<T>(props: {
  state: { data: { data: T[]; next_cursor: string | null } | undefined; error: string | undefined; loading: boolean };
  what: string;
  empty: string;
  columns: string[];
  actions?: boolean;
  pager: { page: number; next: (c: string) => void; previous: () => void };
  label: string;
  row: (item: T) => ComponentChildren;
}) {
  return (
    <Loaded state={props.state} what={props.what}>
      {(page) =>
        page.data.length === 0 ? (
          <Empty>{props.empty}</Empty>
        ) : (
          <>
            <div class="table-wrap" tabIndex={0}>
              <table>
                <thead>
                  <tr>
                    {props.columns.map((c) => (
                      <th key={c} scope="col">
                        {c}
                      </th>
                    ))}
                    {props.actions ? (
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    ) : null}
                  </tr>
                </thead>
                <tbody>{page.data.map(props.row)}</tbody>
              </table>
            </div>
            <Pager
              label={props.label}
              page={props.pager.page}
              next={page.next_cursor}
              onNext={props.pager.next}
              onPrevious={props.pager.previous}
            />
          </>
        )
      }
    </Loaded>
  );
}

export const Field = (props: { label: string; children: ComponentChildren; hint?: string }) => (
  <label class="field">
    <span>{props.label}</span>
    {props.children}
    {props.hint ? <small class="muted">{props.hint}</small> : null}
  </label>
);

export const Status = (props: { value: string }) => (
  <span class={`badge badge-${props.value.replace(/[^a-z_]/g, '')}`}>{props.value.replace('_', ' ')}</span>
);

export const formatTime = (iso: string | null | undefined) =>
  iso
    ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' }) + ' UTC'
    : '—';

export const formatMoney = (amount: number, currency: string) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);

/** A status filter: "Any" and the statuses given, as the list's API names them. */
export function StatusSelect<T extends string>(props: {
  value: T | '';
  options: readonly T[];
  onChange: (value: T | '') => void;
}) {
  return (
    <Field label="Status">
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as T | '')}>
        <option value="">Any</option>
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o[0]!.toUpperCase() + o.slice(1)}
          </option>
        ))}
      </select>
    </Field>
  );
}
