// Shared Jest settings for every project.
// - TypeScript through ts-jest in isolated-modules mode (transpile only, decorator metadata
//   included); `npm run build` type-checks the whole tree once instead.
// - Nest 12 ships ES modules only: Node 20.19+ loads them through require(esm), Jest does not (before
//   Node 24.9), so those packages are compiled to CommonJS for the tests with Babel.
// - Workspace libs and apps resolve to their sources, so tests never need a build.
const path = require('node:path');

const ESM_ONLY_PACKAGES = ['@nestjs', 'file-type', 'strtok3', 'token-types', '@tokenizer', 'uint8array-extras', 'jose'];

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.spec.json') }],
    '^.+\\.m?js$': [
      'babel-jest',
      {
        babelrc: false,
        configFile: false,
        plugins: [
          path.join(__dirname, 'tools/jest/import-meta-url.babel.js'),
          '@babel/plugin-transform-dynamic-import',
          '@babel/plugin-transform-modules-commonjs',
        ],
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  moduleNameMapper: {
    '^@dcr/app-([a-z-]+)$': path.join(__dirname, 'apps/$1/src/index.ts'),
    '^@dcr/([a-z-]+)$': path.join(__dirname, 'libs/$1/src/index.ts'),
  },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  setupFiles: [path.join(__dirname, 'tools/jest/setup.js')],
};
