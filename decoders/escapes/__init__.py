"""NV_ESC_* escapes: numbers, names and argument structs of the 'F' ioctls."""
