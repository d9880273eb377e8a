package audit

// ReadSpool reads a spool file, for tests.
var ReadSpool = readSpool
