/** This package's version, sent in the User-Agent; kept equal to package.json's by a test. */
export const SDK_VERSION = '0.1.0';
