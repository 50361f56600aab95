import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { List, ListPage } from './hooks.ts';
import { appBase, onLinkClick, reachedInApp } from './router.ts';

/**
 * The name of the app that Page is in (the tab title's suffix): the dashboard's by default; the affiliate portal
 * (src/portal) sets its own at start, as it is built from the same components (its base path is the router's).
 */
const shell = { name: 'Dashboard' };
export const setShell = (s: typeof shell) => Object.assign(shell, s);

/**
 * A page: its title in the tab and as the one h1. Arriving by a link inside the app moves focus to the h1, so that
 * screen readers announce the new page; a page loaded afresh leaves focus at the top (the skip link comes first).
 */
export function Page(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · ${shell.name}`;
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
      href={appBase() + props.to}
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

function Pager(props: { list: List<ListPage<unknown>>; next: string | null | undefined; label: string }) {
  const { list } = props;
  if (list.page === 1 && !props.next) return null;
  return (
    <nav class="pager" aria-label={`${props.label} pages`}>
      <button type="button" disabled={list.page === 1} onClick={list.previous}>
        Previous
      </button>
      <span>Page {list.page}</span>
      <button type="button" disabled={!props.next} onClick={() => props.next && list.next(props.next)}>
        Next
      </button>
    </nav>
  );
}

interface TableProps<T> {
  /** The column headers; the last column, with `actions`, is named for screen readers only. */
  columns: string[];
  actions?: boolean;
  /** A caption for screen readers, where no heading names the table. */
  caption?: string;
  row: (item: T) => ComponentChildren;
}

/**
 * A table of rows in its own box, which scrolls sideways when the table is wider than the screen (so that the page
 * does not): every table of the dashboard is one.
 */
export function Table<T>(props: TableProps<T> & { rows: readonly T[] }) {
  return (
    <div class="table-wrap" tabIndex={0}>
      <table>
        {props.caption ? <caption class="visually-hidden">{props.caption}</caption> : null}
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
        <tbody>{props.rows.map(props.row)}</tbody>
      </table>
    </div>
  );
}

/**
 * One page of a cursor-paged list (`useList`) as a table: loading and error states, the empty text, a row per item
 * and the pager.
 */
export function PagedTable<T>(
  props: TableProps<T> & { list: List<ListPage<T>>; what: string; empty: string; label: string },
) {
  return (
    <Loaded state={props.list} what={props.what}>
      {(page) =>
        page.data.length === 0 ? (
          <Empty>{props.empty}</Empty>
        ) : (
          <>
            <Table
              columns={props.columns}
              actions={props.actions}
              caption={props.caption}
              rows={page.data}
              row={props.row}
            />
            <Pager list={props.list} next={page.next_cursor} label={props.label} />
          </>
        )
      }
    </Loaded>
  );
}

/** A labelled input, its hint, and what the API said is wrong with it (a refused submit's INVALID_INPUT detail). */
export const Field = (props: { label: string; children: ComponentChildren; hint?: string; error?: string }) => (
  <label class="field">
    <span>{props.label}</span>
    {props.children}
    {props.hint ? <small class="muted">{props.hint}</small> : null}
    {props.error ? <small class="error field-error">{props.error}</small> : null}
  </label>
);

/** A password being chosen: at least 10 characters, as the gateway asks, and marked new for password managers. */
export const NewPasswordField = (props: {
  label: string;
  error: string | undefined;
  bind: { value: string; onInput: (e: Event) => void };
}) => (
  <Field label={props.label} hint="At least 10 characters" error={props.error}>
    <input type="password" name="password" autoComplete="new-password" minLength={10} required {...props.bind} />
  </Field>
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

/**
 * A destructive action asked twice: the button (named `${verb} ${thing}`), then in its place "Confirm …" and
 * "Cancel" in a group asking the question. `onConfirm` does the work; the row it stands in usually changes after.
 */
export function Confirmed(props: { verb: string; thing: string; busy: boolean; onConfirm: () => Promise<unknown> }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)} aria-label={`${props.verb} ${props.thing}`}>
        {props.verb}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={`${props.verb} ${props.thing}?`}>
      <button
        type="button"
        class="danger"
        disabled={props.busy}
        onClick={() => void props.onConfirm().finally(() => setAsking(false))}
      >
        Confirm {props.verb.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
