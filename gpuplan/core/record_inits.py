"""The ``__init__`` of a frozen record with n fields, no default factory and no ``__post_init__``
(``_frozen_<n>``, n = 1 to 40), and the constructor of such a record (``_make_<n>``, n = 1 to 16, its
fields named ``_f0``...): the texts :func:`gpuplan.core.records._init_code` and
:func:`~gpuplan.core.records.constructor` would compile, written out here so that Python's bytecode
cache holds them. Compiling one such text took ~0.7 M
instructions, ~18 M a cold recommend (benchmarks/README.md, issue 21); reading it back is marshal's
work. ``records`` takes their code and gives it the names ``compile`` gives (``<string>``,
``__create_fn__.<locals>.__init__``, line 2; a constructor's field names); tests/test_records.py
checks each equal to the compiled text's. No ``from __future__`` import: the compiled text has none
(``dont_inherit=True``). Generated: do not edit by hand (the test regenerates each text).
"""
# ruff: noqa


def _frozen_1(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0):
  __records_set__(self,'__dict__',{'_f0':_f0})
 return __init__


def _frozen_2(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1})
 return __init__


def _frozen_3(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2})
 return __init__


def _frozen_4(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3})
 return __init__


def _frozen_5(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4})
 return __init__


def _frozen_6(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5})
 return __init__


def _frozen_7(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6})
 return __init__


def _frozen_8(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7})
 return __init__


def _frozen_9(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8})
 return __init__


def _frozen_10(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9})
 return __init__


def _frozen_11(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10})
 return __init__


def _frozen_12(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11})
 return __init__


def _frozen_13(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12})
 return __init__


def _frozen_14(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13})
 return __init__


def _frozen_15(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14})
 return __init__


def _frozen_16(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15})
 return __init__


def _frozen_17(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16})
 return __init__


def _frozen_18(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17})
 return __init__


def _frozen_19(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18})
 return __init__


def _frozen_20(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19})
 return __init__


def _frozen_21(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20})
 return __init__


def _frozen_22(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21})
 return __init__


def _frozen_23(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22})
 return __init__


def _frozen_24(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23})
 return __init__


def _frozen_25(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24})
 return __init__


def _frozen_26(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25})
 return __init__


def _frozen_27(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26})
 return __init__


def _frozen_28(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27})
 return __init__


def _frozen_29(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28})
 return __init__


def _frozen_30(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29})
 return __init__


def _frozen_31(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30})
 return __init__


def _frozen_32(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31})
 return __init__


def _frozen_33(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32})
 return __init__


def _frozen_34(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32,_f33):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32,'_f33':_f33})
 return __init__


def _frozen_35(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32,_f33,_f34):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32,'_f33':_f33,'_f34':_f34})
 return __init__


def _frozen_36(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32,_f33,_f34,_f35):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32,'_f33':_f33,'_f34':_f34,'_f35':_f35})
 return __init__


def _frozen_37(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32,_f33,_f34,_f35,_f36):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32,'_f33':_f33,'_f34':_f34,'_f35':_f35,'_f36':_f36})
 return __init__


def _frozen_38(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32,_f33,_f34,_f35,_f36,_f37):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32,'_f33':_f33,'_f34':_f34,'_f35':_f35,'_f36':_f36,'_f37':_f37})
 return __init__


def _frozen_39(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32,_f33,_f34,_f35,_f36,_f37,_f38):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32,'_f33':_f33,'_f34':_f34,'_f35':_f35,'_f36':_f36,'_f37':_f37,'_f38':_f38})
 return __init__


def _frozen_40(__dataclass_builtins_object__,_HAS_DEFAULT_FACTORY,__records_set__):
 def __init__(self,_f0,_f1,_f2,_f3,_f4,_f5,_f6,_f7,_f8,_f9,_f10,_f11,_f12,_f13,_f14,_f15,_f16,_f17,_f18,_f19,_f20,_f21,_f22,_f23,_f24,_f25,_f26,_f27,_f28,_f29,_f30,_f31,_f32,_f33,_f34,_f35,_f36,_f37,_f38,_f39):
  __records_set__(self,'__dict__',{'_f0':_f0,'_f1':_f1,'_f2':_f2,'_f3':_f3,'_f4':_f4,'_f5':_f5,'_f6':_f6,'_f7':_f7,'_f8':_f8,'_f9':_f9,'_f10':_f10,'_f11':_f11,'_f12':_f12,'_f13':_f13,'_f14':_f14,'_f15':_f15,'_f16':_f16,'_f17':_f17,'_f18':_f18,'_f19':_f19,'_f20':_f20,'_f21':_f21,'_f22':_f22,'_f23':_f23,'_f24':_f24,'_f25':_f25,'_f26':_f26,'_f27':_f27,'_f28':_f28,'_f29':_f29,'_f30':_f30,'_f31':_f31,'_f32':_f32,'_f33':_f33,'_f34':_f34,'_f35':_f35,'_f36':_f36,'_f37':_f37,'_f38':_f38,'_f39':_f39})
 return __init__


def _make_1(_f0):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0})
 return _records_out


def _make_2(_f0, _f1):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1})
 return _records_out


def _make_3(_f0, _f1, _f2):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2})
 return _records_out


def _make_4(_f0, _f1, _f2, _f3):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3})
 return _records_out


def _make_5(_f0, _f1, _f2, _f3, _f4):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4})
 return _records_out


def _make_6(_f0, _f1, _f2, _f3, _f4, _f5):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5})
 return _records_out


def _make_7(_f0, _f1, _f2, _f3, _f4, _f5, _f6):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6})
 return _records_out


def _make_8(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7})
 return _records_out


def _make_9(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8})
 return _records_out


def _make_10(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8, '_f9': _f9})
 return _records_out


def _make_11(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, _f10):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8, '_f9': _f9, '_f10': _f10})
 return _records_out


def _make_12(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, _f10, _f11):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8, '_f9': _f9, '_f10': _f10, '_f11': _f11})
 return _records_out


def _make_13(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, _f10, _f11, _f12):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8, '_f9': _f9, '_f10': _f10, '_f11': _f11, '_f12': _f12})
 return _records_out


def _make_14(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, _f10, _f11, _f12, _f13):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8, '_f9': _f9, '_f10': _f10, '_f11': _f11, '_f12': _f12, '_f13': _f13})
 return _records_out


def _make_15(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, _f10, _f11, _f12, _f13, _f14):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8, '_f9': _f9, '_f10': _f10, '_f11': _f11, '_f12': _f12, '_f13': _f13, '_f14': _f14})
 return _records_out


def _make_16(_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, _f10, _f11, _f12, _f13, _f14, _f15):
 _records_out = _records_new(_records_cls)
 _records_set(_records_out, '__dict__', {'_f0': _f0, '_f1': _f1, '_f2': _f2, '_f3': _f3, '_f4': _f4, '_f5': _f5, '_f6': _f6, '_f7': _f7, '_f8': _f8, '_f9': _f9, '_f10': _f10, '_f11': _f11, '_f12': _f12, '_f13': _f13, '_f14': _f14, '_f15': _f15})
 return _records_out
