// Probes: whole-system runs that look for rare races and report what they find. Not part of
// `npm test` (a probe can find nothing in one run and something in the next); run one with
// `npx jest -c e2e/probes/jest.config.js`, as docs/testing.md says.
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: 'probes',
  rootDir: __dirname,
  testMatch: ['<rootDir>/*.probe.ts'],
};
