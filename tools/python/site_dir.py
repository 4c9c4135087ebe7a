"""Where `cmake --install` puts the Python client for install prefix PREFIX (prints the folder).

    python3 site_dir.py PREFIX

The folder this interpreter already searches, when it searches one below PREFIX (Debian and
Ubuntu: /usr/local/lib/python3.X/dist-packages for /usr/local); else PREFIX/lib/python3.X/
site-packages, which then goes on PYTHONPATH. (pip's own --prefix is no help here: Debian's pip
adds "local/" to any prefix.)
"""

import os
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
version = "python%d.%d" % sys.version_info[:2]
searched = [os.path.normpath(p) for p in sys.path if p]
for candidate in (os.path.join(prefix, "lib", version, "dist-packages"),
                  os.path.join(prefix, "lib", version, "site-packages"),
                  os.path.join(prefix, "lib", "python3", "dist-packages")):
    if candidate in searched:
        print(candidate)
        break
else:
    print(sysconfig.get_path("purelib", "posix_prefix", {"base": prefix, "platbase": prefix}))
