/**
 * Stripe's bracket notation for form bodies and query strings: `metadata[order]=1` is `{metadata: {order: "1"}}`,
 * `expand[]=a&expand[]=b` and `expand[0]=a` are arrays. Values stay text (the payments service coerces them by its
 * schemas). Objects have no prototype, so no parameter name can reach Object.prototype.
 */
export type FormValue = string | FormValue[] | { [key: string]: FormValue };

const NAME = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;
const MAX_DEPTH = 5;
const MAX_INDEX = 999;

export class FormError extends Error {
  readonly param: string;

  constructor(param: string, options?: ErrorOptions) {
    super(`Invalid parameter name or nesting: ${param}`, options);
    this.param = param;
  }
}

export function parseForm(text: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = Object.create(null) as Record<string, FormValue>;
  for (const [name, value] of new URLSearchParams(text)) {
    const match = NAME.exec(name);
    if (!match) throw new FormError(name);
    const path = [match[1]!, ...[...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
    if (path.length > MAX_DEPTH) throw new FormError(name);
    assign(root, path, value, name);
  }
  return compact(root) as Record<string, FormValue>;
}

function assign(container: FormValue, path: string[], value: string, name: string): void {
  const [head, ...rest] = path as [string, ...string[]];
  const isArray = Array.isArray(container);
  if (isArray && head !== '' && !/^\d{1,3}$/.test(head)) throw new FormError(name);
  if (!isArray && head === '') throw new FormError(name);
  const index = isArray ? (head === '' ? container.length : Number(head)) : -1;
  if (index > MAX_INDEX) throw new FormError(name);
  const read = () => (isArray ? container[index] : (container as Record<string, FormValue>)[head]);
  const write = (v: FormValue) => {
    if (isArray) container[index] = v;
    else (container as Record<string, FormValue>)[head] = v;
  };
  if (rest.length === 0) {
    const existing = read();
    if (existing !== undefined && typeof existing !== 'string') throw new FormError(name);
    write(value);
    return;
  }
  let child = read();
  const wantArray = rest[0] === '' || /^\d{1,3}$/.test(rest[0]!);
  if (child === undefined) {
    child = wantArray ? [] : (Object.create(null) as Record<string, FormValue>);
    write(child);
  }
  if (typeof child === 'string' || Array.isArray(child) !== wantArray) throw new FormError(name);
  assign(child, rest, value, name);
}

/** Arrays written by index may have holes (`a[2]` alone): they close up. */
function compact(value: FormValue): FormValue {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.filter((v) => v !== undefined).map(compact);
  for (const key of Object.keys(value)) value[key] = compact(value[key]!);
  return value;
}
