import Trove
