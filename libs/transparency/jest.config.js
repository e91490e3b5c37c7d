module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'transparency',
  rootDir: __dirname,
};
