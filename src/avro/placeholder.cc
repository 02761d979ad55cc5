namespace sluice {}
