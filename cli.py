"""Run the appliance without installing it: python cli.py … (also the frozen executable's script)."""

from appliance.__main__ import main

if __name__ == "__main__":
    main()
