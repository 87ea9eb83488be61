package main

// ioCommands are load and export (not built yet).
func ioCommands() []command { return nil }
