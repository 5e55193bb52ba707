// The linter (npm run lint, run by CI with zero findings allowed). Formatting is dprint's (dprint.json).
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "client/dist/", "data/", "schemas/", "**/*.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: "module" },
    rules: {
      // Generators of Effect.gen need not yield (a branch may only return).
      "require-yield": "off",
      // Unused names are the compiler's job (noUnusedLocals/Parameters); `_`-prefixed ones are deliberate.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", ignoreRestSiblings: true }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": "off",
      eqeqeq: ["error", "always"]
    }
  }
)
