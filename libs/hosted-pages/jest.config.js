module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'hosted-pages',
  rootDir: __dirname,
};
