module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'transport',
  rootDir: __dirname,
};
