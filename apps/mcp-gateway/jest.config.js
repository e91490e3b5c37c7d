module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'mcp-gateway',
  rootDir: __dirname,
};
