"""The CUDA driver API as the shim sees it: the entry points it brackets (api.py), the
driver structures it copies (types.py), and how a decoded launch is tied back to its
API call, kernel and arguments (attribute.py)."""
