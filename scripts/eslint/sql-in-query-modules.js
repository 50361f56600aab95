// A local ESLint rule, loaded by eslint.config.js as the `local` plugin: the edge runs its SQL in query modules only.
// A statement is a tagged template on a postgres.js pool, transaction or reserved connection, or a call of its
// unsafe() or file(), whatever the variable is called (`sql`, `tx`, `db`, `pool`, `ctx.sql`): the tag's type decides,
// read from the type checker. The config says where the rule applies (every file of the edge but its query modules).
/** postgres.js's connection interfaces (ISql is what Sql and TransactionSql extend), in the package's own types. */
const SQL_INTERFACES = new Set(['Sql', 'TransactionSql', 'ReservedSql', 'ISql']);
const POSTGRES_TYPES = /[\\/]node_modules[\\/]postgres[\\/]/;

/** Whether a symbol is one of postgres.js's connection interfaces, declared in the package (not a local namesake). */
const isPostgresInterface = (symbol) =>
  symbol !== undefined &&
  SQL_INTERFACES.has(symbol.getName()) &&
  (symbol.getDeclarations() ?? []).some((d) => POSTGRES_TYPES.test(d.getSourceFile().fileName));

/**
 * Whether a value of `type` runs statements: one of the interfaces itself (an alias such as shared/src/db.ts's `Sql`
 * or `Queryable` is the same type), an interface extending one, or a union or intersection with one among its parts.
 */
function isPostgresSql(checker, type, seen = new Set()) {
  if (seen.has(type)) return false;
  seen.add(type);
  // A type parameter (`<Q extends Queryable>`) stands for its constraint.
  const constraint = type.isTypeParameter() ? checker.getBaseConstraintOfType(type) : undefined;
  if (constraint) return isPostgresSql(checker, constraint, seen);
  if (type.isUnionOrIntersection()) return type.types.some((part) => isPostgresSql(checker, part, seen));
  const target = type.target ?? type;
  if (isPostgresInterface(target.getSymbol()) || isPostgresInterface(type.aliasSymbol)) return true;
  if (!target.isClassOrInterface()) return false;
  return (checker.getBaseTypes(target) ?? []).some((base) => isPostgresSql(checker, base, seen));
}

export default {
  meta: {
    type: 'problem',
    docs: {
      description: "SQL runs in the edge's query modules only: statements on a postgres.js connection, found by type",
    },
    schema: [{ type: 'object', properties: { message: { type: 'string' } }, additionalProperties: false }],
    messages: { statement: '{{message}}' },
  },
  create(context) {
    // typescript-eslint's parser services (the config lints with types): the program, and each node's TypeScript node.
    const services = context.sourceCode.parserServices;
    if (!services?.program)
      throw new Error('local/sql-in-query-modules needs type information (parserOptions.projectService)');
    const checker = services.program.getTypeChecker();
    const message = context.options[0]?.message ?? "SQL runs in the edge's query modules only.";
    // A value typed `any` (an untyped `res.locals.sql`, a type that did not resolve) says nothing: its name decides,
    // as the habit of naming pools and transactions `sql` and `tx` has it.
    const SQL_NAMES = /^(sql|tx)$/;
    const nameOf = (node) =>
      node.type === 'Identifier' ? node.name : node.type === 'MemberExpression' ? nameOf(node.property) : undefined;
    const runsSql = (node) => {
      const type = checker.getTypeAtLocation(services.esTreeNodeToTSNodeMap.get(node));
      if (type.flags & 1 /* TypeFlags.Any */) return SQL_NAMES.test(nameOf(node) ?? '');
      return isPostgresSql(checker, type);
    };
    /** `x.unsafe` or `x['unsafe']` (and `file`). */
    const calledMethod = (callee) =>
      callee.computed
        ? callee.property.type === 'Literal' && typeof callee.property.value === 'string'
          ? callee.property.value
          : undefined
        : callee.property.type === 'Identifier'
          ? callee.property.name
          : undefined;
    return {
      TaggedTemplateExpression(node) {
        if (runsSql(node.tag)) context.report({ node, messageId: 'statement', data: { message } });
      },
      CallExpression(node) {
        const callee = node.callee;
        if (
          callee.type === 'MemberExpression' &&
          ['unsafe', 'file'].includes(calledMethod(callee) ?? '') &&
          runsSql(callee.object)
        )
          context.report({ node, messageId: 'statement', data: { message } });
      },
    };
  },
};
