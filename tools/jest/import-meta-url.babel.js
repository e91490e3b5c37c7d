// Babel plugin for the tests only: Nest 12's ES modules use `import.meta.url` (for createRequire);
// compiled to CommonJS for Jest, it becomes the module file's URL. It builds the URL from
// `__filename` without calling `require`, which some of those modules shadow with a local binding.
module.exports = function importMetaUrl({ types: t }) {
  return {
    visitor: {
      MetaProperty(path) {
        const { node, parentPath } = path;
        if (node.meta.name !== 'import' || node.property.name !== 'meta') return;
        if (!parentPath.isMemberExpression() || parentPath.node.property.name !== 'url') return;
        parentPath.replaceWith(t.binaryExpression('+', t.stringLiteral('file://'), t.identifier('__filename')));
      },
    },
  };
};
