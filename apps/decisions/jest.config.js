module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'decisions',
  rootDir: __dirname,
};
