module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'frame-protocol',
  rootDir: __dirname,
};
