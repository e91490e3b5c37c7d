// Whole-system tests: every service of a country running, against the real PostgreSQL and NATS.
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'e2e',
  rootDir: __dirname,
};
