// The linter (npm run lint; CI allows no finding). Formatting is dprint's (dprint.json).
import js from "@eslint/js"
import globals from "globals"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "client/dist/", "data/", "schemas/", "**/*.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node } },
    rules: {
      // Effect.gen's generators need not yield (a branch may only return or fail).
      "require-yield": "off",
      // `_`-prefixed names are deliberately unused (a destructured field left out, say).
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_",
        ignoreRestSiblings: true
      }],
      // A type-only import is erased: the bundle and the published client never load what only types need.
      // `typeof import(…)` stays allowed: it types a module loaded lazily (libxml2's WebAssembly).
      "@typescript-eslint/consistent-type-imports": ["error", {
        fixStyle: "inline-type-imports",
        disallowTypeAnnotations: false
      }],
      // Data.TaggedEnum writes a case without fields as `{}`.
      "@typescript-eslint/no-empty-object-type": ["error", { allowObjectTypes: "always" }],
      // `== null` is the one loose comparison we use: null or undefined alike.
      eqeqeq: ["error", "always", { null: "ignore" }]
    }
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" }
  },
  {
    // Tests read foreign JSON (OTLP exports, raw answers) and assert its exact shape: `any` there is
    // the assertion's business, not the code's. The service's own code keeps the rule.
    files: ["test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  },
  {
    files: ["dashboard/src/**"],
    languageOptions: { globals: { ...globals.browser } }
  },
  {
    // In TSX a generic arrow function's `<A>` would read as an element: it is written
    // `<A extends unknown>` (the other spelling, `<A,>`, loses its comma to the formatter).
    files: ["**/*.tsx"],
    rules: { "@typescript-eslint/no-unnecessary-type-constraint": "off" }
  }
)
