// The type-aware lint gate (`npm run lint`). Rules are typescript-eslint's recommended type-checked set; the few
// changes below say why. Formatting is Prettier's job, so no stylistic rules are enabled here.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import sqlInQueryModules from './scripts/eslint/sql-in-query-modules.js';

/**
 * The boundaries between the workspaces, on resolved paths (a relative path and an `@platform/*` name that lead to
 * the same file are the same import). A service imports shared/ and its own files only: services talk over NATS,
 * never through each other's code. The dashboard is a browser app: what it knows of the gateway is the types
 * services/dashboard/build.ts generates from the gateway's OpenAPI documents into its src/generated/. shared/ is
 * below every service and imports none. Import circles are dpdm's to find (scripts/lint.ts): this rule's cousin
 * import-x/no-cycle skips type-only imports.
 */
const root = import.meta.dirname;
const services = readdirSync(`${root}/services`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const elsewhere = ['./services', './scripts', './test', './bench'];
const boundaries = [
  ...services
    .filter((name) => name !== 'dashboard')
    .map((name) => ({
      target: `./services/${name}`,
      from: elsewhere,
      except: [`./${name}`],
      message: `The ${name} service imports shared/ and its own files only (another service is reached over NATS).`,
    })),
  {
    target: './services/dashboard/src',
    from: [...elsewhere, './shared'],
    except: ['./dashboard/src'],
    message: "The dashboard imports only its own files and the gateway's types generated into src/generated/.",
  },
  { target: './shared', from: elsewhere, message: 'shared/ is below every service: it imports none.' },
];

/**
 * The gateway's surfaces (docs/CONTRIBUTING.md, "The edge's skeleton"): a surface imports its own files, http/ (the
 * plumbing and the accounts the surfaces share) and shared/, never another surface's files. What two surfaces share
 * goes in http/ (http/accounts/ for sessions, permissions, tokens and the sign-in and sign-up limits). The one
 * exception is a surface's route specs, specs.ts: they are data, and the API document describes the public pages of
 * tracking, onboarding and programme beside /api/v1 (surfaces/api-v1/specs.ts).
 */
const SURFACES_DIR = 'services/gateway/src/surfaces';
const surfaces = readdirSync(`${root}/${SURFACES_DIR}`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const surfaceBoundaries = surfaces.map((name) => ({
  target: `./${SURFACES_DIR}/${name}`,
  from: `./${SURFACES_DIR}`,
  except: [`./${name}`, ...surfaces.filter((other) => other !== name).map((other) => `./${other}/specs.ts`)],
  message:
    `The ${name} surface imports its own files, http/ and shared/ only, and of another surface its specs.ts: ` +
    'what surfaces share goes in services/gateway/src/http/ (accounts in http/accounts/).',
}));

/** What a service's domain/ may not import but for types: the modules that read, write or talk. */
const DOMAIN_IO_MODULES = [
  ...['db', 'outbox', 'outbox-relay', 'transactions', 'affiliate-view', 'nats', 'service', 'operation'].map(
    (name) => `@platform/shared/${name}`,
  ),
  ...['request-server', 'batcher', 'consume', 'purge', 'partitions', 'settings-writer', 'mail', 'migrate'].map(
    (name) => `@platform/shared/${name}`,
  ),
  'postgres',
  'nodemailer',
  'undici',
  ...['fs', 'fs/promises', 'http', 'https', 'http2', 'child_process', 'dgram', 'dns', 'dns/promises', 'tls'].flatMap(
    (name) => [`node:${name}`, name],
  ),
];
const DOMAIN_IO = 'domain/ decides and does no I/O: read and write in an operation or a worker of src/.';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '.data/**', 'services/dashboard/src/generated/**', 'charts/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver()] },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: [...boundaries, ...surfaceBoundaries] }],
      // Errors keep their cause: an error thrown in a catch block carries the one it caught, for our own error
      // classes and the helpers that make them too (the number is where the constructor takes `{ cause }`).
      'preserve-caught-error': [
        'error',
        {
          requireCatchParameter: true,
          errorClassNames: [
            ...['PoisonMessage', 'PermanentRefusal', 'AttemptEnded', 'UsageError', 'RefusedAddressError'],
            ...['IdempotencyKeyReused', 'FormError', 'DatabaseDeadlineError', 'invalidRequest'],
            ...['UndecryptableSecret', 'BalanceInsufficient'].map((name) => ({ name, argumentPosition: 1 })),
            ...['ConfigError', 'StripeError', 'invalidInput'].map((name) => ({ name, argumentPosition: 3 })),
            { name: 'conflict', argumentPosition: 3 },
            { name: 'ApiError', argumentPosition: 4 },
          ],
        },
      ],
      // `_`-prefixed names are deliberately unused (positional parameters, destructured leftovers).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // A service's domain/ holds its rules as functions of what they are given (docs/CONTRIBUTING.md): it reads and
    // writes nothing itself, so it imports no query module, pool, outbox, transaction helper, bus, socket or file
    // system, nor the service's deps (its pool, bus and clock) or operations. Types from them are allowed: a rule
    // may name the rows it is handed. Modules are named in full (`paths`): the `patterns` globs have no braces.
    files: ['services/*/src/domain/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...DOMAIN_IO_MODULES.map((name) => ({ name, allowTypeImports: true, message: DOMAIN_IO })),
            // Its address helpers (isIP, BlockList) compute; its sockets do not.
            ...['node:net', 'net'].map((name) => ({
              name,
              importNames: ['connect', 'createConnection', 'createServer', 'Server', 'Socket'],
              allowTypeImports: true,
              message: DOMAIN_IO,
            })),
          ],
          patterns: [
            {
              group: ['**/queries/*', '**/operations/*', '**/deps.ts', '@nats-io/*'],
              allowTypeImports: true,
              message: DOMAIN_IO,
            },
          ],
        },
      ],
    },
  },
  {
    // The edge runs its SQL in query modules only (docs/CONTRIBUTING.md, "The edge's skeleton"): a surface's in its
    // queries/, a folder of http/'s in that folder's queries.ts. Anywhere else a statement is a call to one of them.
    // A statement is a tagged template on a postgres.js pool, transaction or reserved connection, or their
    // unsafe()/file(), whatever the variable is called: the local rule (scripts/eslint/sql-in-query-modules.js) knows
    // them by their type. Fragments inside a query module's statements are the query module's.
    files: ['services/gateway/src/**/*.ts'],
    ignores: ['services/gateway/src/surfaces/*/queries/**', 'services/gateway/src/http/*/queries.ts'],
    plugins: { local: { rules: { 'sql-in-query-modules': sqlInQueryModules } } },
    rules: {
      'local/sql-in-query-modules': [
        'error',
        {
          message:
            "SQL runs in the edge's query modules only: a surface's in surfaces/<surface>/queries/<table>.ts, a folder of http/'s in its queries.ts. Call a function of one.",
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests read JSON answers as `any` on purpose and assert their shape; tap awaits its `t.test` promises, and
      // its callbacks are async by habit, awaiting or not.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
