// Offline answers for `next/font/google` at `next build` time (no change to the app's source).
//
// Next.js reads `NEXT_FONT_GOOGLE_MOCKED_RESPONSES` (a path it `require`s) instead of fetching
// fonts.googleapis.com: the module maps each stylesheet URL to its CSS, and a `src: url(/abs/path)`
// in that CSS is read from disk instead of fonts.gstatic.com. agent-chat-ui's layout asks for
// `Inter({ subsets: ["latin"], display: "swap" })`, i.e. the variable-weight Inter stylesheet
// below. The font file is Inter's latin variable woff2 from the npm package
// @fontsource-variable/inter 5.3.0 (SIL Open Font License, see OFL-Inter.txt).
const fs = require("node:fs");
const path = require("node:path");

const css = fs
  .readFileSync(path.join(__dirname, "inter.css"), "utf8")
  .replace(/url\(\.\/([^)]+)\)/g, (_, file) => `url(${path.join(__dirname, file)})`);

module.exports = {
  "https://fonts.googleapis.com/css2?family=Inter:wght@100..900&display=swap": css,
};
