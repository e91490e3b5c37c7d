module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'testing',
  rootDir: __dirname,
};
