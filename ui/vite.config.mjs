// The studio's build: relative asset URLs (so /ui works under http.mount_prefix), output into
// the Python package (src/stepgraph/server/ui_dist), no source maps, no inline scripts (the
// page's Content-Security-Policy allows only scripts from its own origin).
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";

const OUT = fileURLToPath(new URL("../src/stepgraph/server/ui_dist", import.meta.url));

export default defineConfig({
  base: "./",
  plugins: [react()],
  build: {
    outDir: OUT,
    emptyOutDir: true,
    sourcemap: false,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
