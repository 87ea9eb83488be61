package maintain

// RebuildDepth exports rebuildDepth to the external tests.
const RebuildDepth = rebuildDepth
