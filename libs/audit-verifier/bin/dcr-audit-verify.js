#!/usr/bin/env node
// The auditor's tool: `npx dcr-audit-verify --help`. Built by `npm run build` into ../dist.
process.exitCode = require('../dist/cli.js').main(process.argv.slice(2));
