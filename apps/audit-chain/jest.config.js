module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'audit-chain',
  rootDir: __dirname,
};
