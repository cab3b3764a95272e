"""Run the appliance without installing it: python cli.py …"""

from appliance.cli import main

if __name__ == "__main__":
    main()
