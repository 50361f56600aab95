// The type-aware lint gate (`npm run lint`). Rules are typescript-eslint's recommended type-checked set; the few
// changes below say why. Formatting is Prettier's job, so no stylistic rules are enabled here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '.data/**', 'services/dashboard/src/generated/**', 'charts/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
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
