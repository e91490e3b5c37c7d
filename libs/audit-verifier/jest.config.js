module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'audit-verifier',
  rootDir: __dirname,
};
