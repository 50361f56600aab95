/**
 * The column arrays of a batch statement's `unnest(...)`, one per field, built from its rows by pickers that are made
 * once, when the query module loads: `const commissionColumns = unnestColumns({ id: (l: Line) => l.id, … })` at
 * module level, then `const c = commissionColumns(lines)` and `${c.id}::text[]` in the statement.
 *
 * Why not `lines.map((l) => l.id)` in the query function: V8 keeps a function's optimized code only while some
 * closure of it is alive. A closure made on every call is dead at every full garbage collection, loses its code
 * there and is compiled again once it is hot: under load the compiler never rests, on threads that share the
 * machine's cores with everything else. Pickers made once keep their code, and so does this loop.
 */
export function unnestColumns<P extends Record<string, (row: never) => unknown>>(
  pickers: P,
): (rows: readonly Parameters<P[keyof P]>[0][]) => { [K in keyof P]: ReturnType<P[K]>[] } {
  const entries = Object.entries(pickers) as [string, (row: unknown) => unknown][];
  return (rows) => {
    const columns: Record<string, unknown[]> = {};
    for (const [name, pick] of entries) {
      const values = new Array<unknown>(rows.length);
      for (let i = 0; i < rows.length; i++) values[i] = pick(rows[i]);
      columns[name] = values;
    }
    return columns as { [K in keyof P]: ReturnType<P[K]>[] };
  };
}
