/**
 * The part of js-yaml the tests use to read YAML (the observability configuration). js-yaml is in
 * node_modules through the devDependencies (openapi-typescript → @redocly/openapi-core) without
 * type declarations of its own; the result is checked with Schema where it is used.
 */
declare module "js-yaml" {
  export function load(text: string): unknown
}
