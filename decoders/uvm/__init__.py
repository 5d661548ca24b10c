"""UVM (/dev/nvidia-uvm, /dev/nvidia-uvm-tools): plain-number ioctls, their structs and sizes."""
