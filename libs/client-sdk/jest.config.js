const preset = require('../../jest.preset.js');

// The sources are browser ES modules that import their siblings as `./x.js`; the tests load the `.ts`.
module.exports = {
  ...preset,
  displayName: 'client-sdk',
  rootDir: __dirname,
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', ...preset.moduleNameMapper },
};
