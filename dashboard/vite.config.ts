/**
 * The dashboard's build (SPEC §15), run by `npm run build` at install. Everything the page needs
 * lands in dist/dashboard: index.html and content-hashed files under assets/, which the service
 * serves with a year's cache (src/system/DashboardFiles.ts). No inline script or style is emitted,
 * so the page runs under a Content-Security-Policy without 'unsafe-inline'.
 */
import { defineConfig } from "vite"

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "../dist/dashboard",
    // Emptied, so old builds do not pile up: a running service keeps serving the files it read
    // into memory on its first request (src/system/DashboardFiles.ts), whatever a rebuild does.
    emptyOutDir: true,
    // The polyfill would be injected inline; every browser the dashboard supports has modulepreload.
    modulePreload: { polyfill: false },
    // Small files are otherwise inlined as data: URLs; the CSP allows only files from the service.
    assetsInlineLimit: 0,
    target: "es2022",
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1024
  }
})
