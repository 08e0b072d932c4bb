import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Built with `npx vite build web` (output web/dist, git-ignored) and served by browser_check.mjs.
export default defineConfig({
  root: new URL(".", import.meta.url).pathname,
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 4000 },
  logLevel: "warn",
});
