"""Resource Manager (RM): escapes' parameter structs, classes, controls, the object tree."""
