module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'webhooks',
  rootDir: __dirname,
};
