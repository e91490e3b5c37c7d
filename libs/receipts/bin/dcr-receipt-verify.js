#!/usr/bin/env node
// Offline verifier of signed receipts; the code is src/verify/cli.ts, built to dist/ by `nx build receipts`.
require('../dist/verify/cli.js').main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
