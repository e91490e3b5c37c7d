module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'oidc',
  rootDir: __dirname,
};
