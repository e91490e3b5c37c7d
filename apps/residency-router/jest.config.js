module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'residency-router',
  rootDir: __dirname,
};
