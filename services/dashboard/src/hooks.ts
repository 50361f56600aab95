import { useCallback, useEffect, useState } from 'preact/hooks';
import { RequestFailed } from './api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads `fn`'s data when `deps` change; `reload` loads it again (after a change). */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    fn().then(
      (data) => live && setState({ data, loading: false }),
      (err: Error) => live && setState({ error: err.message, loading: false }),
    );
    return () => {
      live = false;
    };
    // `fn` is a new closure on every render: `deps` says when its result changes.
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** One page of a list as the APIs answer it: the items and the cursor of the next page (none: the last page). */
export interface ListPage<T> {
  data: T[];
  next_cursor?: string | null;
}

export interface List<P extends ListPage<unknown>> extends Loaded<P> {
  /** Which page is shown, from 1. */
  page: number;
  next: (cursor: string) => void;
  previous: () => void;
  /** Back to the first page (after a change that adds rows at its top). */
  reset: () => void;
}

/**
 * A cursor-paged list: `fetchPage` loads the page at a cursor (none: the first). The cursors seen so far are kept to
 * go back; a change of `filters` starts again at the first page, in the same render (no request for a stale page).
 */
export function useList<P extends ListPage<unknown>>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  filters: unknown[] = [],
): List<P> {
  const key = JSON.stringify(filters);
  const [seen, setSeen] = useState<{ key: string; cursors: (string | undefined)[] }>({ key, cursors: [undefined] });
  const cursors = seen.key === key ? seen.cursors : [undefined];
  const cursor = cursors[cursors.length - 1];
  const loaded = useLoad(() => fetchPage(cursor), [key, cursor]);
  return {
    ...loaded,
    page: cursors.length,
    next: (c) => setSeen({ key, cursors: [...cursors, c] }),
    previous: () => setSeen({ key, cursors: cursors.length > 1 ? cursors.slice(0, -1) : cursors }),
    reset: () => setSeen({ key, cursors: [undefined] }),
  };
}

/** Runs a change that is not a form (a button in a row), keeping its pending state and its error in words. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await work();
    } catch (err) {
      setError((err as Error).message);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

type Values = Record<string, string>;

interface Form<V extends Values> {
  values: V;
  set: (name: keyof V, value: string) => void;
  /** An input's or a select's value and its handler. */
  bind: (name: keyof V) => { value: string; onInput: (e: Event) => void };
  onSubmit: (e: Event) => void;
  pending: boolean;
  /** The failure in words (for the whole form). */
  error: string | undefined;
  /** What the API said about one field (its INVALID_INPUT details), by the field's path in the request body. */
  fieldError: (path: string) => string | undefined;
}

/**
 * A form: its values (text, as inputs hold them), submit with its pending state, and the API's answer to a refused
 * submit, in words and per field. `submit` turns the values into the request and throws on failure (`unwrap`);
 * `done` gets its result; `keep` leaves the values as they are after success (a settings form), else they clear.
 */
export function useForm<V extends Values, R>(
  initial: V,
  submit: (values: V) => Promise<R>,
  done?: (result: R) => void,
  opts: { keep?: boolean } = {},
): Form<V> {
  const [values, setValues] = useState(initial);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const set = (name: keyof V, value: string) => setValues((v) => ({ ...v, [name]: value }));
  const onSubmit = (e: Event) => {
    e.preventDefault();
    setPending(true);
    setError(undefined);
    setFields({});
    submit(values).then(
      (result) => {
        setPending(false);
        if (!opts.keep) setValues(initial);
        done?.(result);
      },
      (err: Error) => {
        setPending(false);
        setError(err.message);
        if (err instanceof RequestFailed)
          setFields(Object.fromEntries(err.details.map((d) => [d.path.replace(/^body\.?/, ''), d.message])));
      },
    );
  };
  return {
    values,
    set,
    bind: (name) => ({
      value: values[name] ?? '',
      onInput: (e) => set(name, (e.currentTarget as HTMLInputElement).value),
    }),
    onSubmit,
    pending,
    error,
    fieldError: (path) => fields[path],
  };
}
