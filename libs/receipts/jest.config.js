module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'receipts',
  rootDir: __dirname,
};
