module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'server-sdk',
  rootDir: __dirname,
};
